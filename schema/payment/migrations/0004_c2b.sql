CREATE TABLE `c2b_accounts` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`account_number` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `c2b_accounts_account_number_unique` ON `c2b_accounts` (`account_number`);--> statement-breakpoint
CREATE TABLE `c2b_payments` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`trans_id` text NOT NULL,
	`shortcode` text NOT NULL,
	`transaction_type` text NOT NULL,
	`amount_cents` integer NOT NULL,
	`bill_ref_number` text,
	`invoice_number` text,
	`msisdn` text,
	`payer_name` text,
	`trans_time` text NOT NULL,
	`org_account_balance` text,
	`third_party_trans_id` text,
	`transaction_id` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `c2b_payments_trans` ON `c2b_payments` (`tenant_id`,`trans_id`);--> statement-breakpoint
CREATE INDEX `c2b_payments_tenant_created` ON `c2b_payments` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `c2b_shortcodes` (
	`shortcode` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`mode` text NOT NULL,
	`response_type` text NOT NULL,
	`status` text NOT NULL,
	`registered_at` text NOT NULL,
	`released_at` text
);
--> statement-breakpoint
CREATE INDEX `c2b_shortcodes_tenant` ON `c2b_shortcodes` (`tenant_id`,`status`);--> statement-breakpoint
CREATE TABLE `provider_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`kind` text NOT NULL,
	`conversation_id` text,
	`status` text NOT NULL,
	`request` text NOT NULL,
	`result_code` integer,
	`result_desc` text,
	`result` text,
	`user_id` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `provider_requests_tenant_created` ON `provider_requests` (`tenant_id`,`created_at`);