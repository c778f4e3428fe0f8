CREATE TABLE `counterparties` (
	`tenant_id` text NOT NULL,
	`key` text NOT NULL,
	`name` text,
	`phone` text,
	`tx_count` integer NOT NULL,
	`total_cents` integer NOT NULL,
	`in_cents` integer NOT NULL,
	`out_cents` integer NOT NULL,
	`first_seen` text NOT NULL,
	`last_seen` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `key`)
);
--> statement-breakpoint
CREATE INDEX `counterparties_total` ON `counterparties` (`tenant_id`,`total_cents`);--> statement-breakpoint
CREATE TABLE `daily_counterparties` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`counterparty_key` text NOT NULL,
	`direction` text NOT NULL,
	`tx_count` integer NOT NULL,
	`amount_cents` integer NOT NULL,
	`last_seen` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `counterparty_key`, `direction`)
);
--> statement-breakpoint
CREATE INDEX `daily_counterparties_key` ON `daily_counterparties` (`tenant_id`,`counterparty_key`,`day`);--> statement-breakpoint
CREATE TABLE `daily_totals` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`user_id` text NOT NULL,
	`direction` text NOT NULL,
	`category` text NOT NULL,
	`tx_count` integer NOT NULL,
	`amount_cents` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `user_id`, `direction`, `category`)
);
--> statement-breakpoint
CREATE TABLE `transactions` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`user_id` text,
	`occurred_at` text NOT NULL,
	`local_day` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`direction` text NOT NULL,
	`counterparty_name` text,
	`counterparty_phone` text,
	`counterparty_key` text,
	`description` text NOT NULL,
	`receipt_number` text,
	`balance_cents` integer,
	`category` text,
	`category_confidence` real,
	`category_source` text,
	`rule_id` text,
	`source` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `transactions_time` ON `transactions` (`tenant_id`,`occurred_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_counterparty` ON `transactions` (`tenant_id`,`counterparty_key`,`occurred_at`);