CREATE TABLE `imports` (
	`tenant_id` text NOT NULL,
	`id` text PRIMARY KEY NOT NULL,
	`file_name` text,
	`accepted` integer NOT NULL,
	`duplicates` integer NOT NULL,
	`rejected` integer NOT NULL,
	`skipped` integer NOT NULL,
	`user_id` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `imports_tenant` ON `imports` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `transactions` (
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
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transactions_receipt` ON `transactions` (`tenant_id`,`receipt_number`);--> statement-breakpoint
CREATE INDEX `transactions_tenant_time` ON `transactions` (`tenant_id`,`occurred_at`);