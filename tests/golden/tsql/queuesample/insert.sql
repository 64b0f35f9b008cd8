-- queuesample: insert
/* queuetop */ INSERT INTO [QueueSample].[WorkQueue] ([JobType], [JobInfo]) OUTPUT inserted.[WorkQueueID] VALUES (CAST(? AS uniqueidentifier), CAST(? AS xml));
