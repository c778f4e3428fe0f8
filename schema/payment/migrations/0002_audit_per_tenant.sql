ALTER TABLE `audit_log` ADD `tenant_seq` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `audit_tenant_seq` ON `audit_log` (`tenant_id`,`tenant_seq`);