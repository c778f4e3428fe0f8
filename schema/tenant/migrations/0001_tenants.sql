CREATE TABLE `tenant_moves` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`from_placement` text NOT NULL,
	`to_placement` text NOT NULL,
	`state` text NOT NULL,
	`rows` text,
	`started_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE INDEX `tenant_moves_state` ON `tenant_moves` (`state`);--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text NOT NULL,
	`isolation` text NOT NULL,
	`database_path` text,
	`status` text NOT NULL,
	`timezone` text NOT NULL,
	`settings` text DEFAULT '{}' NOT NULL,
	`feature_overrides` text DEFAULT '{}' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
