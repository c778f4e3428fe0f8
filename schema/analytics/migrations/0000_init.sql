CREATE TABLE `inbox` (
	`consumer` text NOT NULL,
	`event_id` text NOT NULL,
	`handled_at` text NOT NULL,
	PRIMARY KEY(`consumer`, `event_id`)
);
--> statement-breakpoint
CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`topic` text NOT NULL,
	`tenant_id` text NOT NULL,
	`payload` text NOT NULL,
	`created_at` text NOT NULL,
	`sent_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `outbox_id_unique` ON `outbox` (`id`);--> statement-breakpoint
CREATE INDEX `outbox_unsent` ON `outbox` (`sent_at`,`seq`);--> statement-breakpoint
CREATE INDEX `outbox_topic` ON `outbox` (`topic`,`created_at`);