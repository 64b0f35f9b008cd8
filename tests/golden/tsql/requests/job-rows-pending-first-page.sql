-- requests: job_rows pending, first page
/* queuetop */ SELECT TOP (?) [id], [request], [InsertedDate] FROM [dbo].[RequestsQueue] WITH (READPAST) WHERE (1 = 1) ORDER BY [InsertedDate], [id];
