DROP INDEX `daily_counterparties_key`;--> statement-breakpoint
DROP INDEX `transactions_counterparty`;