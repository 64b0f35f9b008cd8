-- requests: rows_in_states pending, after a job (queuetop jobs' keyset)
/* queuetop */ SELECT TOP (?) [id], [request], [InsertedDate] FROM [dbo].[RequestsQueue] WITH (READPAST) WHERE (1 = 1) AND ([InsertedDate] >= CAST(? AS datetime) AND ([InsertedDate] > CAST(? AS datetime) OR [id] > CAST(? AS uniqueidentifier))) ORDER BY [InsertedDate], [id];
