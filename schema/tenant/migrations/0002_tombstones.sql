CREATE TABLE `tenant_tombstones` (
	`id` text PRIMARY KEY NOT NULL,
	`deleted_at` text NOT NULL
);
