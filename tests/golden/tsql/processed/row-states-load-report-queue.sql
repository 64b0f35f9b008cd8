-- processed: row_states load report: queue
/* queuetop */ SELECT [ID], CASE WHEN [PROCESSED] = 0 THEN 'pending' ELSE NULL END FROM [dbo].[work_items] WHERE [ID] >= CAST(? AS bigint);
