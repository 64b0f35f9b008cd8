-- queuesample: row_states load report: queue
/* queuetop */ SELECT [WorkQueueID], CASE WHEN [RetrievedDate] IS NULL THEN 'pending' ELSE NULL END FROM [QueueSample].[WorkQueue] WHERE [WorkQueueID] >= CAST(? AS bigint);
