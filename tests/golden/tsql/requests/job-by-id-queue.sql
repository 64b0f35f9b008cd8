-- requests: job_by_id queue
/* queuetop */ SELECT [id], [request], [InsertedDate], CASE WHEN 1 = 1 THEN 'pending' ELSE NULL END FROM [dbo].[RequestsQueue] WITH (READPAST) WHERE [id] = CAST(? AS uniqueidentifier);
