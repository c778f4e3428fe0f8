DROP INDEX `users_email`;--> statement-breakpoint
CREATE UNIQUE INDEX `users_tenant_email` ON `users` (`tenant_id`,`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_email` ON `users` (`email`) WHERE status <> 'invited';