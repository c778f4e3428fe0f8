ALTER TABLE `c2b_payments` ADD `status` text DEFAULT 'unverified' NOT NULL;--> statement-breakpoint
ALTER TABLE `c2b_payments` ADD `status_reason` text;--> statement-breakpoint
ALTER TABLE `c2b_payments` ADD `updated_at` text;--> statement-breakpoint
ALTER TABLE `c2b_shortcodes` ADD `token_nonce` text;--> statement-breakpoint
ALTER TABLE `c2b_shortcodes` ADD `initiator_name` text;--> statement-breakpoint
ALTER TABLE `c2b_shortcodes` ADD `security_credential` text;