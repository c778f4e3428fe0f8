CREATE TABLE `counters` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `invoice_payments` (
	`id` text PRIMARY KEY NOT NULL,
	`invoice_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`checkout_request_id` text,
	`amount_cents` integer NOT NULL,
	`phone_number` text,
	`status` text NOT NULL,
	`result_desc` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `invoice_payments_invoice` ON `invoice_payments` (`invoice_id`);--> statement-breakpoint
CREATE INDEX `invoice_payments_checkout` ON `invoice_payments` (`checkout_request_id`);--> statement-breakpoint
CREATE TABLE `invoices` (
	`id` text PRIMARY KEY NOT NULL,
	`number` text NOT NULL,
	`tenant_id` text NOT NULL,
	`status` text NOT NULL,
	`plan_id` text NOT NULL,
	`period_start` text NOT NULL,
	`period_end` text NOT NULL,
	`lines` text NOT NULL,
	`subtotal_cents` integer NOT NULL,
	`total_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`issued_at` text NOT NULL,
	`due_at` text NOT NULL,
	`paid_at` text,
	`voided_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_number` ON `invoices` (`number`);--> statement-breakpoint
CREATE UNIQUE INDEX `invoices_period` ON `invoices` (`tenant_id`,`period_start`);--> statement-breakpoint
CREATE INDEX `invoices_tenant` ON `invoices` (`tenant_id`,`id`);--> statement-breakpoint
CREATE INDEX `invoices_status` ON `invoices` (`status`,`due_at`);--> statement-breakpoint
CREATE TABLE `plan_changes` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`from_plan` text NOT NULL,
	`to_plan` text NOT NULL,
	`changed_at` text NOT NULL,
	`period_start` text NOT NULL,
	`period_end` text NOT NULL,
	`remaining_seconds` integer NOT NULL,
	`period_seconds` integer NOT NULL,
	`amount_cents` integer NOT NULL,
	`invoice_id` text
);
--> statement-breakpoint
CREATE INDEX `plan_changes_tenant` ON `plan_changes` (`tenant_id`,`invoice_id`);--> statement-breakpoint
CREATE TABLE `plans` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`price_cents` integer NOT NULL,
	`currency` text NOT NULL,
	`interval` text NOT NULL,
	`limits` text NOT NULL,
	`features` text NOT NULL,
	`overage` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `subscription_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`reason` text NOT NULL,
	`plan` text NOT NULL,
	`previous_plan` text,
	`status` text NOT NULL,
	`previous_status` text,
	`period_start` text NOT NULL,
	`period_end` text NOT NULL,
	`occurred_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `subscription_events_tenant` ON `subscription_events` (`tenant_id`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `subscriptions` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`tenant_name` text,
	`plan_id` text NOT NULL,
	`period_plan_id` text NOT NULL,
	`status` text NOT NULL,
	`billing_anchor` text NOT NULL,
	`period_index` integer NOT NULL,
	`current_period_start` text NOT NULL,
	`current_period_end` text NOT NULL,
	`grace_period_ends` text,
	`cancel_at_period_end` integer NOT NULL,
	`credit_cents` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `usage_records` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`event_id` text NOT NULL,
	`metric` text NOT NULL,
	`quantity` integer NOT NULL,
	`period_start` text NOT NULL,
	`source` text NOT NULL,
	`recorded_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `usage_records_event` ON `usage_records` (`tenant_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `usage_records_period` ON `usage_records` (`tenant_id`,`period_start`,`metric`,`quantity`);