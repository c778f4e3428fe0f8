CREATE TABLE `receipt_reports` (
	`tenant_id` text NOT NULL,
	`receipt_number` text NOT NULL,
	`source` text NOT NULL,
	`channel` text,
	`transaction_id` text NOT NULL,
	`occurred_at` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`direction` text NOT NULL,
	`balance_cents` integer,
	`import_id` text,
	PRIMARY KEY(`tenant_id`, `receipt_number`, `source`)
);
--> statement-breakpoint
CREATE INDEX `receipt_reports_time` ON `receipt_reports` (`tenant_id`,`source`,`occurred_at`);
--> statement-breakpoint
INSERT OR IGNORE INTO `receipt_reports` (`tenant_id`, `receipt_number`, `source`, `transaction_id`, `occurred_at`, `amount_cents`, `direction`, `balance_cents`) SELECT `tenant_id`, `receipt_number`, `source`, `id`, `occurred_at`, `amount_cents`, `direction`, `balance_cents` FROM `transactions` WHERE `receipt_number` IS NOT NULL;
