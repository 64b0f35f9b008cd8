-- native: init: upgrade index IX_WorkQueue_Pending
/* queuetop */ CREATE INDEX [IX_WorkQueue_Pending] ON [queuetop].[WorkQueue] ([JobType], [Priority], [AvailableDate]) INCLUDE ([CreatedDate], [RetrievedDate]) WHERE [RetrievedDate] IS NULL WITH (DROP_EXISTING = ON);
