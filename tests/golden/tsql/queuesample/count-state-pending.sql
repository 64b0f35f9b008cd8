-- queuesample: count_state pending
/* queuetop */ SELECT COUNT(*) FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [RetrievedDate] IS NULL AND [JobType] = CAST(? AS uniqueidentifier);
