-- native: requeue dead retry insert
/* queuetop */ INSERT INTO [queuetop].[WorkQueue] ([JobType], [CreatedDate], [JobInfo]) SELECT [JobType], [CreatedDate], [JobInfo] FROM [queuetop].[WorkCompleted] WHERE [WorkQueueID] IN (CAST(? AS bigint), CAST(? AS bigint)) AND [Outcome] = 'dead';
