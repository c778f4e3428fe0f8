CREATE TABLE `cashflow_data_quality` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`import_id` text NOT NULL,
	`file_name` text,
	`verdict` text NOT NULL,
	`finding` text,
	`processed_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_cashflow_daily` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`category` text NOT NULL,
	`kind` text DEFAULT '' NOT NULL,
	`inflow` integer NOT NULL,
	`outflow` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `category`, `kind`)
);
--> statement-breakpoint
INSERT INTO `__new_cashflow_daily`("tenant_id", "day", "category", "kind", "inflow", "outflow", "count") SELECT "tenant_id", "day", "category", '', "inflow", "outflow", "count" FROM `cashflow_daily`;--> statement-breakpoint
DROP TABLE `cashflow_daily`;--> statement-breakpoint
ALTER TABLE `__new_cashflow_daily` RENAME TO `cashflow_daily`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
ALTER TABLE `cashflow_transactions` ADD `kind` text;