-- requests: rows_in_states pending rows
/* queuetop */ SELECT TOP (?) [id], [InsertedDate], [request] FROM [dbo].[RequestsQueue] WITH (READPAST) WHERE (1 = 1) ORDER BY [InsertedDate], [id];
