-- native: init: create index IX_WorkQueue_Claimed
/* queuetop */ CREATE INDEX [IX_WorkQueue_Claimed] ON [queuetop].[WorkQueue] ([JobType], [TimeoutDate]) INCLUDE ([CreatedDate]) WHERE [RetrievedDate] IS NOT NULL;
