-- processed: job_by_id queue
/* queuetop */ SELECT [ID], [COMMAND], [PROCESSED], CASE WHEN [PROCESSED] = 0 THEN 'pending' ELSE NULL END FROM [dbo].[work_items] WITH (READPAST) WHERE [ID] = CAST(? AS bigint);
