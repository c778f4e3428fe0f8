-- Kinds and legs (DESIGN §16). Rows stored before kinds were counted as a payment by their
-- direction (money in a customer's, money out a supplier's), so they are given those kinds: every
-- figure says of them what it said before. The rollups keep WITHOUT ROWID (0007; drizzle-kit
-- cannot express it, and its own rebuild read a `kind` column the old tables lack), with the kind
-- last in the key so reads by day still seek.
ALTER TABLE `transactions` ADD `kind` text;
--> statement-breakpoint
ALTER TABLE `transactions` ADD `leg` text DEFAULT '' NOT NULL;
--> statement-breakpoint
UPDATE `transactions` SET `kind` = CASE `direction` WHEN 'in' THEN 'customer_payment' ELSE 'supplier_payment' END WHERE `kind` IS NULL;
--> statement-breakpoint
CREATE TABLE `__new_daily_summaries` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`user_id` text NOT NULL,
	`in_count` integer NOT NULL,
	`in_cents` integer NOT NULL,
	`out_count` integer NOT NULL,
	`out_cents` integer NOT NULL,
	`kind` text DEFAULT '' NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `user_id`, `kind`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_daily_summaries` SELECT `tenant_id`, `day`, `user_id`, `in_count`, `in_cents`, 0, 0, 'customer_payment' FROM `daily_summaries` WHERE `in_count` <> 0;
--> statement-breakpoint
INSERT INTO `__new_daily_summaries` SELECT `tenant_id`, `day`, `user_id`, 0, 0, `out_count`, `out_cents`, 'supplier_payment' FROM `daily_summaries` WHERE `out_count` <> 0;
--> statement-breakpoint
DROP TABLE `daily_summaries`;
--> statement-breakpoint
ALTER TABLE `__new_daily_summaries` RENAME TO `daily_summaries`;
--> statement-breakpoint
CREATE TABLE `__new_daily_totals` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`user_id` text NOT NULL,
	`direction` text NOT NULL,
	`category` text NOT NULL,
	`tx_count` integer NOT NULL,
	`amount_cents` integer NOT NULL,
	`kind` text DEFAULT '' NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `user_id`, `direction`, `category`, `kind`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_daily_totals` SELECT `tenant_id`, `day`, `user_id`, `direction`, `category`, `tx_count`, `amount_cents`, CASE `direction` WHEN 'in' THEN 'customer_payment' ELSE 'supplier_payment' END FROM `daily_totals`;
--> statement-breakpoint
DROP TABLE `daily_totals`;
--> statement-breakpoint
ALTER TABLE `__new_daily_totals` RENAME TO `daily_totals`;
