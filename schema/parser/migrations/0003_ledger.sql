CREATE TABLE `receipt_reports` (
	`tenant_id` text NOT NULL,
	`receipt_number` text NOT NULL,
	`source` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `receipt_number`, `source`)
);
