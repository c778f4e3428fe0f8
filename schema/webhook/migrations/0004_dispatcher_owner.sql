CREATE TABLE `webhook_dispatcher` (
	`id` integer PRIMARY KEY NOT NULL,
	`owner` text NOT NULL,
	`started_at` text NOT NULL
);
