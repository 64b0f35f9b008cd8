-- processed: rows_in_states pending rows
/* queuetop */ SELECT TOP (?) [ID], NULL, [COMMAND] FROM [dbo].[work_items] WITH (READPAST) WHERE ([PROCESSED] = 0) ORDER BY [ID];
