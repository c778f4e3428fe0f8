CREATE TABLE `webhook_attempts` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`delivery_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`at` text NOT NULL,
	`status_code` integer,
	`latency_ms` integer NOT NULL,
	`response_excerpt` text,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `webhook_attempts_delivery` ON `webhook_attempts` (`delivery_id`,`seq`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`endpoint_id` text NOT NULL,
	`message_id` text NOT NULL,
	`event` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`delivered_at` text
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`,`endpoint_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint` ON `webhook_deliveries` (`endpoint_id`,`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_tenant` ON `webhook_deliveries` (`tenant_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` text,
	`version` integer DEFAULT 1 NOT NULL,
	`rate_limit` integer,
	`status` text NOT NULL,
	`disabled_reason` text,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_tenant` ON `webhook_endpoints` (`tenant_id`,`id`);