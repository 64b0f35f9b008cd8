-- queuesample: rows_in_states pending rows
/* queuetop */ SELECT TOP (?) [WorkQueueID], [CreatedDate], [JobInfo] FROM [QueueSample].[WorkQueue] WITH (READPAST) WHERE ([RetrievedDate] IS NULL) AND [JobType] = CAST(? AS uniqueidentifier) ORDER BY [CreatedDate], [WorkQueueID];
