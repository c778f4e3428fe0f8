CREATE TABLE `receipts` (
	`tenant_id` text NOT NULL,
	`receipt_number` text NOT NULL,
	`transaction_id` text NOT NULL,
	PRIMARY KEY(`tenant_id`, `receipt_number`)
);
--> statement-breakpoint
INSERT OR IGNORE INTO `receipts` (`tenant_id`, `receipt_number`, `transaction_id`) SELECT `tenant_id`, json_extract(`payload`, '$.receipt_number'), `id` FROM `categorized` WHERE json_extract(`payload`, '$.receipt_number') IS NOT NULL;
