-- native: init: create column WorkCompleted.JobInfo
/* queuetop */ ALTER TABLE [queuetop].[WorkCompleted] ADD [JobInfo] nvarchar(max) NULL;
