-- native: init: create index IX_WorkCompleted_Dead
/* queuetop */ CREATE INDEX [IX_WorkCompleted_Dead] ON [queuetop].[WorkCompleted] ([JobType]) INCLUDE ([Outcome]) WHERE [Outcome] = 'dead';
