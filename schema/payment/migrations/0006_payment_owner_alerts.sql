CREATE TABLE `payment_alerts` (
	`name` text PRIMARY KEY NOT NULL,
	`detail` text NOT NULL,
	`count` integer NOT NULL,
	`first_at` text NOT NULL,
	`last_at` text NOT NULL,
	`cleared_at` text
);
--> statement-breakpoint
ALTER TABLE `disbursements` ADD `owner` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `owner` text;