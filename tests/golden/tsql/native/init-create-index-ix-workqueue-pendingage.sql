-- native: init: create index IX_WorkQueue_PendingAge
/* queuetop */ CREATE INDEX [IX_WorkQueue_PendingAge] ON [queuetop].[WorkQueue] ([JobType], [CreatedDate], [WorkQueueID]) INCLUDE ([AvailableDate], [RetrievedDate], [Attempts]) WHERE [RetrievedDate] IS NULL AND [Attempts] >= 0;
