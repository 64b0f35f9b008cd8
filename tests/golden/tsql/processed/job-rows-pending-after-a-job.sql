-- processed: job_rows pending, after a job
/* queuetop */ SELECT TOP (?) [ID], [COMMAND], [PROCESSED] FROM [dbo].[work_items] WITH (READPAST) WHERE ([PROCESSED] = 0) AND (([ID] > CAST(? AS bigint))) ORDER BY [ID];
