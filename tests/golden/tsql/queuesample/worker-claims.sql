-- queuesample: worker_claims
/* queuetop */ SELECT [RetrievedBy], CAST(NULL AS bigint), CAST(NULL AS bigint), SUM(CASE WHEN [RetrievedDate] >= DATEADD(millisecond, ?, GETDATE()) THEN 1 ELSE 0 END), MAX([RetrievedDate]) FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] >= DATEADD(millisecond, ?, GETDATE()) GROUP BY [RetrievedBy];
