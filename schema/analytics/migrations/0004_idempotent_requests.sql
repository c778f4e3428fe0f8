CREATE TABLE `idempotent_requests` (
	`tenant_id` text NOT NULL,
	`route` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`status` integer,
	`content_type` text,
	`body` text,
	`created_at` integer NOT NULL,
	`locked_until` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `route`, `key`)
);
--> statement-breakpoint
CREATE INDEX `idempotent_requests_created` ON `idempotent_requests` (`created_at`);