-- native: pending_by_type
/* queuetop */ SELECT [JobType], COUNT(*), MIN([CreatedDate]) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NULL GROUP BY [JobType];
