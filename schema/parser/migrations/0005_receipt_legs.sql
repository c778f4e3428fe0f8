DROP INDEX `transactions_receipt`;--> statement-breakpoint
ALTER TABLE `transactions` ADD `leg` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `transactions` ADD `kind` text;--> statement-breakpoint
CREATE UNIQUE INDEX `transactions_receipt_leg` ON `transactions` (`tenant_id`,`receipt_number`,`leg`);--> statement-breakpoint
ALTER TABLE `imports` ADD `read` integer;--> statement-breakpoint
ALTER TABLE `imports` ADD `layout` text;--> statement-breakpoint
ALTER TABLE `imports` ADD `proof` text;