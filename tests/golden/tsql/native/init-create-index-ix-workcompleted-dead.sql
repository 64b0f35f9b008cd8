-- native: init: create index IX_WorkCompleted_Dead
/* queuetop */ CREATE INDEX [IX_WorkCompleted_Dead] ON [queuetop].[WorkCompleted] ([JobType], [CompletedDate], [WorkQueueID]) INCLUDE ([Outcome]) WHERE [Outcome] = 'dead';
