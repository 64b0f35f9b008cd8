-- native: claimed_by_type
/* queuetop */ SELECT [JobType], COUNT(*), SUM(CASE WHEN [TimeoutDate] < ? THEN 1 ELSE 0 END) FROM [queuetop].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NOT NULL GROUP BY [JobType];
