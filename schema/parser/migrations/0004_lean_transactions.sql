DROP INDEX `transactions_tenant_time`;
--> statement-breakpoint
-- The rows move into the id's B-tree (WITHOUT ROWID; drizzle-kit cannot express it, the snapshot
-- stays as generated): an import row then costs that tree and the receipt index only.
CREATE TABLE `__new_transactions` (
	`tenant_id` text NOT NULL,
	`id` text PRIMARY KEY NOT NULL,
	`receipt_number` text,
	`occurred_at` text NOT NULL,
	`amount` integer NOT NULL,
	`direction` text NOT NULL,
	`counterparty_name` text,
	`counterparty_phone` text,
	`description` text NOT NULL,
	`balance` integer,
	`source` text NOT NULL,
	`user_id` text,
	`import_id` text,
	`created_at` text NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_transactions` SELECT * FROM `transactions`;
--> statement-breakpoint
DROP TABLE `transactions`;
--> statement-breakpoint
ALTER TABLE `__new_transactions` RENAME TO `transactions`;
--> statement-breakpoint
CREATE UNIQUE INDEX `transactions_receipt` ON `transactions` (`tenant_id`,`receipt_number`);
