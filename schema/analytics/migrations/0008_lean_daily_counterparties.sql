-- Keyed direction first, the daily counterparty rollup's key is the (tenant, direction, day,
-- counterparty) order insights reads, and WITHOUT ROWID its B-tree holds every column: the
-- covering index `daily_counterparties_direction_day` goes with the old table, one B-tree
-- written per rollup row instead of two (drizzle-kit cannot express WITHOUT ROWID; the snapshot
-- stays as generated).
CREATE TABLE `__new_daily_counterparties` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`counterparty_key` text NOT NULL,
	`direction` text NOT NULL,
	`tx_count` integer NOT NULL,
	`amount_cents` integer NOT NULL,
	`last_seen` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `direction`, `day`, `counterparty_key`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_daily_counterparties`("tenant_id", "day", "counterparty_key", "direction", "tx_count", "amount_cents", "last_seen") SELECT "tenant_id", "day", "counterparty_key", "direction", "tx_count", "amount_cents", "last_seen" FROM `daily_counterparties`;
--> statement-breakpoint
DROP TABLE `daily_counterparties`;
--> statement-breakpoint
ALTER TABLE `__new_daily_counterparties` RENAME TO `daily_counterparties`;
