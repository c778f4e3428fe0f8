CREATE TABLE `categorized` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`description` text NOT NULL,
	`counterparty` text,
	`amount` integer NOT NULL,
	`direction` text NOT NULL,
	`category` text NOT NULL,
	`confidence` real NOT NULL,
	`source` text NOT NULL,
	`rule_id` text,
	`payload` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `id`)
);
--> statement-breakpoint
CREATE TABLE `learned` (
	`tenant_id` text NOT NULL,
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`category` text NOT NULL,
	`transaction_id` text NOT NULL,
	`user_id` text,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `kind`, `key`)
);
--> statement-breakpoint
CREATE TABLE `rules` (
	`tenant_id` text NOT NULL,
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`match` text NOT NULL,
	`pattern` text NOT NULL,
	`category` text NOT NULL,
	`priority` integer NOT NULL,
	`confidence` real NOT NULL,
	`direction` text,
	`min_amount` integer,
	`max_amount` integer,
	`counterparty` text,
	`active` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rules_tenant` ON `rules` (`tenant_id`);