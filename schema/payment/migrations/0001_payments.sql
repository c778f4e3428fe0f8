CREATE TABLE `audit_log` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`entity` text NOT NULL,
	`entity_id` text NOT NULL,
	`action` text NOT NULL,
	`from_status` text,
	`to_status` text NOT NULL,
	`detail` text NOT NULL,
	`actor` text,
	`at` text NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `audit_log_id_unique` ON `audit_log` (`id`);--> statement-breakpoint
CREATE INDEX `audit_entity` ON `audit_log` (`entity_id`,`seq`);--> statement-breakpoint
CREATE TABLE `disbursements` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`conversation_id` text,
	`phone_number` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`remarks` text NOT NULL,
	`occasion` text,
	`status` text NOT NULL,
	`result_code` integer,
	`result_desc` text,
	`transaction_receipt` text,
	`receiver_name` text,
	`user_id` text,
	`transaction_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `disbursements_tenant_created` ON `disbursements` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`tenant_id` text NOT NULL,
	`route` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`ref` text NOT NULL,
	`response_status` integer,
	`response_body` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `route`, `key`)
);
--> statement-breakpoint
CREATE TABLE `payment_index` (
	`ref` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`tenant_id` text NOT NULL,
	`provider_id` text,
	`open` integer NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_index_provider` ON `payment_index` (`provider_id`);--> statement-breakpoint
CREATE INDEX `payment_index_open` ON `payment_index` (`open`,`created_at`);--> statement-breakpoint
CREATE TABLE `payments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`checkout_request_id` text,
	`merchant_request_id` text,
	`phone_number` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`account_reference` text NOT NULL,
	`transaction_desc` text NOT NULL,
	`status` text NOT NULL,
	`result_code` integer,
	`result_desc` text,
	`mpesa_receipt_number` text,
	`transaction_date` text,
	`counterparty_name` text,
	`callback_body` text,
	`callback_at` text,
	`user_id` text,
	`transaction_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_checkout` ON `payments` (`checkout_request_id`);--> statement-breakpoint
CREATE INDEX `payments_tenant_created` ON `payments` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `payments_status` ON `payments` (`status`,`created_at`);