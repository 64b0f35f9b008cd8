-- requests: rows_in_states pending, after a job (queuetop jobs' keyset)
/* queuetop */ SELECT TOP (?) [id], [request], [InsertedDate] FROM [dbo].[RequestsQueue] WITH (READPAST) WHERE (1 = 1) AND (([InsertedDate] > CAST(? AS datetime)) OR ([InsertedDate] = CAST(? AS datetime) AND [id] > CAST(? AS uniqueidentifier))) ORDER BY [InsertedDate], [id];
