-- native: init: create index IX_WorkQueue_Dequeue
/* queuetop */ CREATE INDEX [IX_WorkQueue_Dequeue] ON [queuetop].[WorkQueue] ([Priority], [AvailableDate]) WHERE [RetrievedDate] IS NULL;
