-- queuesample: arrivals_by_id
/* queuetop */ SELECT TOP (?) [WorkQueueID], [JobType], [CreatedDate] FROM [QueueSample].[WorkQueue] WITH (NOLOCK) WHERE [WorkQueueID] > CAST(? AS bigint) ORDER BY [WorkQueueID];
