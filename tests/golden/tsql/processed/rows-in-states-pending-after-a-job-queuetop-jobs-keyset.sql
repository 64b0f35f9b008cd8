-- processed: rows_in_states pending, after a job (queuetop jobs' keyset)
/* queuetop */ SELECT TOP (?) [ID], [COMMAND], [PROCESSED] FROM [dbo].[work_items] WITH (READPAST) WHERE ([PROCESSED] = 0) AND ([ID] > CAST(? AS bigint)) ORDER BY [ID];
