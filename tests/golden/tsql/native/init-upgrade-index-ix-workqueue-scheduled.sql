-- native: init: upgrade index IX_WorkQueue_Scheduled
/* queuetop */ CREATE INDEX [IX_WorkQueue_Scheduled] ON [queuetop].[WorkQueue] ([AvailableDate]) INCLUDE ([JobType], [RetrievedDate]) WHERE [RetrievedDate] IS NULL WITH (DROP_EXISTING = ON);
