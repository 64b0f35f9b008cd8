-- processed: job_rows pending, first page
/* queuetop */ SELECT TOP (?) [ID], [COMMAND], [PROCESSED] FROM [dbo].[work_items] WITH (READPAST) WHERE ([PROCESSED] = 0) ORDER BY [ID];
