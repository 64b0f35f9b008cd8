-- queuesample: in_no_state
/* queuetop */ SELECT [JobType], COUNT(*) FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE (CASE WHEN ([RetrievedDate] IS NULL) OR ([RetrievedDate] IS NOT NULL) THEN 1 ELSE 0 END) = 0 GROUP BY [JobType];
