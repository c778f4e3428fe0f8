CREATE TABLE `cashflow_daily` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`category` text NOT NULL,
	`inflow` integer NOT NULL,
	`outflow` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `category`)
);
--> statement-breakpoint
CREATE TABLE `cashflow_state` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`balance` integer,
	`balance_at` text,
	`low_balance_threshold` integer,
	`balance_below` integer DEFAULT 0 NOT NULL,
	`forecast_below` integer DEFAULT 0 NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `cashflow_transactions` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`day` text NOT NULL,
	`occurred_at` text NOT NULL,
	`direction` text NOT NULL,
	`category` text NOT NULL,
	`amount` integer NOT NULL,
	`balance` integer,
	`counterparty` text,
	PRIMARY KEY(`tenant_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `cashflow_transactions_day` ON `cashflow_transactions` (`tenant_id`,`day`);