CREATE TABLE `daily_summaries` (
	`tenant_id` text NOT NULL,
	`day` text NOT NULL,
	`user_id` text NOT NULL,
	`in_count` integer NOT NULL,
	`in_cents` integer NOT NULL,
	`out_count` integer NOT NULL,
	`out_cents` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `day`, `user_id`)
);
--> statement-breakpoint
INSERT INTO `daily_summaries` (tenant_id, day, user_id, in_count, in_cents, out_count, out_cents)
  SELECT tenant_id, day, user_id,
    sum(CASE WHEN direction = 'in' THEN tx_count ELSE 0 END), sum(CASE WHEN direction = 'in' THEN amount_cents ELSE 0 END),
    sum(CASE WHEN direction = 'out' THEN tx_count ELSE 0 END), sum(CASE WHEN direction = 'out' THEN amount_cents ELSE 0 END)
  FROM `daily_totals` GROUP BY tenant_id, day, user_id;
